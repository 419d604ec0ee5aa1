"""Every option of the library's table reaches `bosch search`, with the
library's default.

    lib_options_cli.py BOSCH LIBBOSCH

The table is read from LIBBOSCH itself through ctypes (bosch_option_count,
_name, _default), not from the command: for each option but seed, `bosch
search --help` must list --NAME (underscores as dashes) with "(default X)"
where X is the library's default, and `bosch search --NAME X --help` must
accept that value (getopt reads it, the library checks it, then --help
exits 0). --seed is the command's own (it also seeds the task)."""
import ctypes
import re
import subprocess
import sys


def main():
    bosch, libpath = sys.argv[1], sys.argv[2]
    lib = ctypes.CDLL(libpath)
    lib.bosch_option_count.restype = ctypes.c_size_t
    lib.bosch_option_name.restype = ctypes.c_char_p
    lib.bosch_option_name.argtypes = [ctypes.c_size_t]
    lib.bosch_option_default.restype = ctypes.c_char_p
    lib.bosch_option_default.argtypes = [ctypes.c_char_p]
    names = [lib.bosch_option_name(i) for i in range(lib.bosch_option_count())]
    assert len(names) >= 20, names
    out = subprocess.run([bosch, "search", "--help"], capture_output=True, text=True,
                         check=True).stdout
    flat = " ".join(out.split())
    failures = []
    given = []
    if "--seed S" not in flat:
        failures.append("--seed missing from search --help")
    for raw in names:
        name = raw.decode()
        default = lib.bosch_option_default(raw).decode()
        if name == "seed":
            continue
        dashed = "--" + name.replace("_", "-")
        m = re.search(re.escape(dashed) + r" \S+ (.*?)(?= --[a-z]| exit codes:|$)", flat)
        if not m:
            failures.append(f"{dashed} missing from search --help")
            continue
        shown = f"(default {default or 'none'})"
        if not m.group(1).endswith(shown):
            failures.append(f"{dashed}: help says {m.group(1)!r}, not ending {shown!r}")
        given += [dashed, default]
    r = subprocess.run([bosch, "search"] + given + ["--help"], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"every option at its default: exit {r.returncode}: {r.stderr.strip()}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(names)} library options, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
