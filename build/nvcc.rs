//! nvcc for the cuPQC build (included by build/cupqc.rs, and by the tests
//! that compile programs against an SDK): found by `scripts/find-nvcc`, the
//! one nvcc search `./pipeline` uses too; its version and architectures;
//! and, for pip's nvcc, a toolkit-shaped overlay so nvlink finds libnvvm.
//! Only std, so a test can include it with `#[path]`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `scripts/find-nvcc` under `root`: the nvcc path, or why none.
pub fn find(root: &Path) -> Result<PathBuf, String> {
    let script = root.join("scripts/find-nvcc");
    let out = Command::new("bash")
        .arg(&script)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !path.is_empty() {
        return Ok(PathBuf::from(path));
    }
    let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Err(if why.is_empty() {
        "no nvcc found ($NVCC, $CUDA_HOME/bin, PATH, /usr/local/cuda, pip's nvidia-cuda-nvcc in .venv or $PQCPROF_VENV)".into()
    } else {
        why
    })
}

/// `release X.Y` from `nvcc --version`.
pub fn version(nvcc: &Path) -> Option<(u32, u32)> {
    let out = Command::new(nvcc).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let rest = text.split("release ").nth(1)?;
    let ver = rest.split([',', ' ', '\n']).next()?;
    let mut it = ver.split('.').map(|x| x.parse::<u32>().ok());
    Some((it.next()??, it.next()??))
}

/// The real architectures this nvcc compiles for (`nvcc --list-gpu-arch`:
/// `compute_75` ... as numbers), or `None` when it cannot say.
pub fn architectures(nvcc: &Path) -> Option<Vec<u32>> {
    let out = Command::new(nvcc).arg("--list-gpu-arch").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let list: Vec<u32> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("compute_"))
        .filter_map(|n| n.parse().ok())
        .collect();
    (!list.is_empty()).then_some(list)
}

/// nvcc from pip (nvidia-cuda-nvcc) ships libnvvm as `lib/libnvvm.so.4`,
/// while nvlink's LTO step loads `<nvcc>/../nvvm/lib64/libnvvm.so`. In that
/// case an overlay of symbolic links in `overlay` gives nvcc the toolkit
/// layout it expects (nvcc finds its tree relative to where it is called);
/// otherwise nvcc itself is returned.
pub fn usable(nvcc: &Path, overlay: &Path) -> Result<PathBuf, String> {
    let Some(bin) = nvcc.parent() else {
        return Ok(nvcc.to_path_buf());
    };
    let top = bin.join("..");
    if top.join("nvvm/lib64/libnvvm.so").exists() {
        return Ok(nvcc.to_path_buf());
    }
    let Some(libnvvm) = ["lib/libnvvm.so", "lib/libnvvm.so.4", "lib64/libnvvm.so"]
        .iter()
        .map(|p| top.join(p))
        .find(|p| p.exists())
    else {
        return Ok(nvcc.to_path_buf());
    };
    let fail = |what: &Path, e: std::io::Error| format!("nvcc overlay at {}: {e}", what.display());
    let link = |from: &Path, to: &Path| {
        let _ = fs::remove_file(to);
        std::os::unix::fs::symlink(from, to).map_err(|e| fail(to, e))
    };
    let _ = fs::remove_dir_all(overlay);
    fs::create_dir_all(overlay.join("bin")).map_err(|e| fail(overlay, e))?;
    fs::create_dir_all(overlay.join("nvvm/lib64")).map_err(|e| fail(overlay, e))?;
    let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    for entry in fs::read_dir(bin).map_err(|e| fail(bin, e))?.flatten() {
        link(
            &canon(&entry.path()),
            &overlay.join("bin").join(entry.file_name()),
        )?;
    }
    for d in ["include", "lib", "lib64"] {
        if top.join(d).exists() {
            link(&canon(&top.join(d)), &overlay.join(d))?;
        }
    }
    for d in ["bin", "libdevice"] {
        if top.join("nvvm").join(d).exists() {
            link(
                &canon(&top.join("nvvm").join(d)),
                &overlay.join("nvvm").join(d),
            )?;
        }
    }
    link(&canon(&libnvvm), &overlay.join("nvvm/lib64/libnvvm.so"))?;
    Ok(overlay
        .join("bin")
        .join(nvcc.file_name().unwrap_or("nvcc".as_ref())))
}

/// The toolkit folder above nvcc's `bin/` (symbolic links resolved).
pub fn toolkit(nvcc: &Path) -> PathBuf {
    fs::canonicalize(nvcc)
        .ok()
        .and_then(|p| p.parent().and_then(|b| b.parent()).map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("/usr/local/cuda"))
}

/// Where `libcudart_static.a` is next to nvcc, for a host link.
pub fn cudart_static_dir(nvcc: &Path, target_arch: &str) -> Result<PathBuf, String> {
    let top = toolkit(nvcc);
    let candidates = [
        top.join("lib64"),
        top.join("lib"),
        top.join(format!("targets/{target_arch}-linux/lib")),
        top.join("targets/sbsa-linux/lib"),
    ];
    candidates
        .iter()
        .find(|d| d.join("libcudart_static.a").is_file())
        .cloned()
        .ok_or_else(|| {
            format!(
                "libcudart_static.a not found next to {} (with nvcc from pip: pip install nvidia-cuda-runtime)",
                nvcc.display()
            )
        })
}
