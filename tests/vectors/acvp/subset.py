#!/usr/bin/env python3
"""Writes the ACVP subset kept in this folder from a copy of the ACVP-Server
gen-val/json-files internalProjection.json files (argument: the folder that
holds ML-KEM-keyGen-FIPS203/ and the others, e.g. liboqs's
tests/ACVP_Vectors). keyGen and encapDecap are kept whole; sigGen keeps the
first 4 cases of each group and sigVer the first case of each reason in each
group. Fields the runner never reads (sigGen's pk, sigVer's sk) are dropped.
Output: gzip'd compact JSON, one file per ACVP set."""
import gzip, json, sys

src = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else "."
sets = ["ML-KEM-keyGen-FIPS203", "ML-KEM-encapDecap-FIPS203",
        "ML-DSA-keyGen-FIPS204", "ML-DSA-sigGen-FIPS204", "ML-DSA-sigVer-FIPS204"]
for name in sets:
    doc = json.load(open(f"{src}/{name}/internalProjection.json"))
    for g in doc["testGroups"]:
        tests = g["tests"]
        if name.endswith("sigGen-FIPS204"):
            tests = tests[:4]
            for t in tests:
                t.pop("pk", None)
        elif name.endswith("sigVer-FIPS204"):
            seen, kept = set(), []
            for t in tests:
                if t["reason"] not in seen:
                    seen.add(t["reason"])
                    t.pop("sk", None)
                    kept.append(t)
            tests = sorted(kept, key=lambda t: t["testPassed"])
        g["tests"] = tests
    data = json.dumps(doc, separators=(",", ":")).encode()
    with gzip.GzipFile(f"{out}/{name}.json.gz", "wb", 9, mtime=0) as f:
        f.write(data)
