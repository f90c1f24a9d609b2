"""The dataset pqc-sig-bench-c's charts website loads, from CSVs in
pqc-sig-bench-c's layout and `pqcprof sizes --format sig-bench`.

Run through scripts/sig-charts-dataset, which provides pandas and zstandard.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import pandas as pd

HEADER = "algorithm,operation,ms_per_op,ops_per_sec,iterations"
COLUMNS = [
    "NIST Security Level",
    "Pubkey (bytes)",
    "Privkey (bytes)",
    "Signature (bytes)",
    "Keygen (μs)",
    "Sign (μs)",
    "Verify (μs)",
]
TIME_COLUMN = {"keygen": "Keygen (μs)", "sign": "Sign (μs)", "verify": "Verify (μs)"}
# When a name has rows from several providers, the library pqc-sig-bench-c uses.
PROVIDER_ORDER = {"liboqs": 0, "openssl": 1, "composite": 2}


def fail(msg):
    print(f"sig-charts-dataset: {msg}", file=sys.stderr)
    sys.exit(1)


def read_csv(path):
    """(metadata dict, [(algorithm, operation, ms_per_op)]) of one CSV."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    meta, rows, seen_header = {}, [], False
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if line.startswith("# "):
            rest = line[2:]
            if rest == HEADER:
                seen_header = True
            elif ":" in rest and not seen_header:
                k, v = rest.split(":", 1)
                meta[k.strip()] = v.strip()
            else:
                fail(f"{path}, line {n}: neither metadata nor the header '# {HEADER}': {line}")
            continue
        if not seen_header:
            fail(f"{path}, line {n}: a row before the header '# {HEADER}' (is this a pqc-sig-bench-c CSV?)")
        cells = line.split(",")
        if len(cells) != 5:
            fail(f"{path}, line {n}: {len(cells)} cells, expected 5 ({HEADER})")
        try:
            ms = float(cells[2])
        except ValueError:
            fail(f"{path}, line {n}: ms_per_op '{cells[2]}' is not a number")
        rows.append((cells[0], cells[1], ms))
    if not seen_header:
        fail(f"{path}: no header line '# {HEADER}': not a pqc-sig-bench-c CSV")
    return meta, rows


def measure_sizes(pqcprof, names):
    """Runs `pqcprof sizes --format sig-bench` for `names`, leaving out (with a
    warning) names pqcprof has no algorithm for; returns the CSV text."""
    names = list(names)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "sizes.csv")
        while names:
            cmd = [pqcprof, "sizes", "--format", "sig-bench", "--slow",
                   "--filter", ",".join(names), "--out", out]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True)
            except OSError as e:
                fail(f"cannot run {pqcprof} ({e}); build it (cargo build --release) or pass --pqcprof BIN or --sizes FILE")
            m = re.search(r"no algorithm matches '([^']*)'", p.stderr)
            if p.returncode == 1 and m and m.group(1) in names:
                print(f"sig-charts-dataset: pqcprof has no algorithm {m.group(1)}; its sizes are left empty", file=sys.stderr)
                names.remove(m.group(1))
                continue
            if not os.path.exists(out):
                fail(f"{' '.join(cmd)} failed (exit {p.returncode}): {p.stderr.strip()}")
            if p.returncode != 0:
                print(f"sig-charts-dataset: pqcprof sizes: {p.stderr.strip()}", file=sys.stderr)
            with open(out, encoding="utf-8") as f:
                return f.read()
    return ""


def parse_sizes(text, origin):
    """{name: (level, pubkey, privkey, signature)} from a sizes CSV: DER key
    lengths where OpenSSL has them (pqc-sig-bench-c's fetch_sizes reports
    DER keys for the classical schemes), else raw; the largest possible
    signature."""
    lines = [l for l in text.splitlines() if l.strip()]
    if not lines:
        return {}
    header = lines[0].split(",")
    need = ["algorithm", "provider", "nist_level", "public_key", "secret_key",
            "public_key_der", "secret_key_der", "signature_max"]
    missing = [c for c in need if c not in header]
    if missing:
        fail(f"{origin}: not a `pqcprof sizes` CSV (missing columns {', '.join(missing)})")
    col = {c: header.index(c) for c in header}
    best = {}
    for line in lines[1:]:
        c = line.split(",")
        if len(c) != len(header) or not c[col["signature_max"]]:
            continue  # a KEM, or a malformed line

        def num(name, fallback=None):
            v = c[col[name]]
            return int(v) if v else (num(fallback) if fallback else None)

        rank = PROVIDER_ORDER.get(c[col["provider"]], 9)
        name = c[col["algorithm"]]
        if name in best and best[name][0] <= rank:
            continue
        best[name] = (rank, (num("nist_level"), num("public_key_der", "public_key"),
                             num("secret_key_der", "secret_key"), num("signature_max")))
    return {k: v for k, (_, v) in best.items()}


def main():
    ap = argparse.ArgumentParser(
        prog="sig-charts-dataset",
        description="A dataset for pqc-sig-bench-c's charts website from CSVs in its layout.")
    ap.add_argument("csv", nargs="+", help="CSVs in pqc-sig-bench-c's layout")
    ap.add_argument("-o", "--output", required=True, help="the dataset to write (.zst)")
    ap.add_argument("--sizes", help="a `pqcprof sizes --format sig-bench` CSV (default: run pqcprof sizes)")
    ap.add_argument("--pqcprof", default=os.environ.get(
        "PQCPROF_BIN", os.path.join(os.environ.get("PQCPROF_ROOT", "."), "target/release/pqcprof")),
        help="the pqcprof binary (default: $PQCPROF_BIN, else target/release/pqcprof)")
    a = ap.parse_args()

    times, origin, metas = {}, {}, []
    kems = 0
    warned = set()
    for path in a.csv:
        meta, rows = read_csv(path)
        metas.append((path, meta))
        for alg, op, ms in rows:
            if op in ("encaps", "decaps"):
                kems += 1
                continue
            if op not in TIME_COLUMN:
                fail(f"{path}: operation '{op}' of {alg}; valid: keygen, sign, verify (encaps, decaps skipped)")
            if alg in origin and origin[alg] != path:
                if (alg, path) not in warned:
                    warned.add((alg, path))
                    print(f"sig-charts-dataset: {alg} is in {origin[alg]} and {path}; keeping {origin[alg]}'s", file=sys.stderr)
                continue
            origin[alg] = path
            times.setdefault(alg, {})[TIME_COLUMN[op]] = ms * 1000.0
    if not times:
        fail("no signature rows (keygen, sign, verify) in " + ", ".join(a.csv))

    if a.sizes:
        try:
            with open(a.sizes, encoding="utf-8") as f:
                sizes_text = f.read()
        except OSError as e:
            fail(f"cannot read --sizes {a.sizes}: {e}")
        sizes = parse_sizes(sizes_text, a.sizes)
    else:
        sizes = parse_sizes(measure_sizes(a.pqcprof, times), "pqcprof sizes")
    no_size = [alg for alg in times if alg not in sizes]
    if no_size:
        print(f"sig-charts-dataset: no sizes for {', '.join(no_size)}; left empty", file=sys.stderr)

    rows = []
    for alg, t in times.items():
        level, pk, sk, sig = sizes.get(alg, (None, None, None, None))
        rows.append([alg, level, pk, sk, sig] + [t.get(c) for c in COLUMNS[4:]])
    df = pd.DataFrame(rows, columns=["Algorithm"] + COLUMNS).set_index("Algorithm")
    for c in COLUMNS[:4]:
        df[c] = df[c].astype("Int64")
    for c in COLUMNS[4:]:
        df[c] = df[c].astype("float64")
    first = metas[0][1]
    df.attrs = {
        "generated_by": "pqcprof scripts/sig-charts-dataset",
        "csv_files": [os.path.basename(p) for p, _ in metas],
        **{k: first[k] for k in ("date", "cpu", "arch", "os", "liboqs", "openssl") if k in first},
    }
    try:
        df.to_pickle(a.output, compression="zstd")
    except OSError as e:
        fail(f"cannot write {a.output}: {e}")
    print(f"sig-charts-dataset: wrote {a.output} ({len(df)} algorithms"
          + (f"; {kems} KEM rows skipped" if kems else "") + ")")


if __name__ == "__main__":
    main()
