//! `pqcprof sizes`: its arguments, and the table of sizes written to a
//! file or standard output.

use crate::core::exit;
use crate::sweep::options::{select, SizesFormat};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Options of `pqcprof sizes`.
#[derive(Debug, Args, Clone)]
pub struct SizesArgs {
    /// Only algorithms matching these terms (as `sweep --filter`).
    #[arg(long, value_name = "TERMS")]
    pub filter: Vec<String>,
    /// Include RSA-8192 and RSA-16384 and the taller XMSS/LMS trees.
    #[arg(long)]
    pub slow: bool,
    /// Write the CSV here instead of standard output (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Algorithm names: pqcprof's, or pqc-sig-bench-c's spelling
    /// (`RSA-PKCS1v15-2048`, `P-256`), as in the sweep's CSVs.
    #[arg(
        long,
        value_name = "pqcprof|sig-bench",
        value_enum,
        default_value_t = SizesFormat::Pqcprof
    )]
    pub format: SizesFormat,
}

/// `pqcprof sizes`: exit 3 when an algorithm's sizes could not be read.
pub fn sizes(args: &SizesArgs) -> Result<i32> {
    let entries = select(&args.filter, args.slow)?;
    // `--out -` is standard output, as for `report -o -`.
    let out = args.out.as_ref().filter(|p| p.as_os_str() != "-");
    if let Some(p) = out {
        crate::write::output::check_output_file(p, &[])?;
    }
    let (text, failed) = crate::sweep::sizes_table(&entries, args.format);
    match out {
        Some(p) => {
            crate::write::output::write_atomic(p, text.as_bytes())?;
            log::info!(target: "sizes", "wrote {}", p.display());
        }
        None => print!("{text}"),
    }
    Ok(if failed > 0 {
        exit::SOME_FAILED
    } else {
        exit::OK
    })
}
