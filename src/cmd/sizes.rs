//! `pqcprof sizes`: its arguments, and the table of sizes written to a
//! file or standard output.

use crate::cmd::bench_args::heading;
use crate::cmd::stdout;
use crate::core::exit;
use crate::core::exit::Usage;
use crate::sweep::options::{select, SizesFormat};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Options of `pqcprof sizes`.
#[derive(Debug, Args, Clone)]
pub struct SizesArgs {
    /// Algorithms matching these terms (as `sweep --filter`)
    #[arg(long, value_name = "TERMS", help_heading = heading::MEASURE, value_parser = super::sweep::filter_terms)]
    pub filter: Vec<String>,
    /// Also RSA-8192, RSA-16384 and the taller XMSS/LMS trees
    #[arg(long, help_heading = heading::MEASURE)]
    pub slow: bool,
    /// File to write the CSV to [default: -, standard output]
    #[arg(short = 'o', long, value_name = "FILE", help_heading = heading::RESULTS)]
    pub out: Option<PathBuf>,
    /// Names: pqcprof's or pqc-sig-bench-c's [default: pqcprof]
    ///
    /// pqcprof's names, or pqc-sig-bench-c's spelling (`RSA-PKCS1v15-2048`,
    /// `P-256`), as in the sweep's CSVs.
    #[arg(
        long,
        value_name = "pqcprof|sig-bench",
        value_enum,
        default_value_t = SizesFormat::Pqcprof,
        hide_default_value = true,
        hide_possible_values = true,
        help_heading = heading::OUTPUT
    )]
    pub format: SizesFormat,
}

/// `pqcprof sizes`: exit 3 when an algorithm's sizes could not be read.
pub fn sizes(args: &SizesArgs) -> Result<i32> {
    let entries = select(&args.filter, args.slow).map_err(|e| Usage(format!("{e:#}")))?;
    // `--out -` is standard output, as for `report -o -`.
    let out = args.out.as_ref().filter(|p| p.as_os_str() != "-");
    if let Some(p) = out {
        crate::write::output::check_output_file(p, &[])?;
    }
    let (text, failed) = crate::sweep::sizes_table(&entries, args.format);
    match out {
        Some(p) => {
            crate::write::output::write_atomic(p, text.as_bytes())?;
            stdout::println(format!("CSV: {}", p.display()))?;
        }
        None => stdout::print(text)?,
    }
    Ok(if failed > 0 {
        exit::SOME_FAILED
    } else {
        exit::OK
    })
}
