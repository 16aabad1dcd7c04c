#!/usr/bin/env python3
"""Checks, inside a CUDA build, that fp8lab still compiles where there is no CUDA toolkit.

`-DFP8LAB_CUDA=OFF` (and any machine without nvcc) builds the same .cpp files as a CUDA build,
without FP8LAB_HAVE_CUDA and without the toolkit's headers; CI builds with CUDA, so that
configuration would otherwise go unchecked. A full second build (11 CPU-minutes here) would add
about half to the CI run on 2 cores. This check compiles (syntax only) the units whose text differs
between the two configurations, the way the CPU-only build would:

- a unit is checked when it, or a header it includes, mentions FP8LAB_HAVE_CUDA or
  FP8LAB_HAVE_NCCL_H, or includes a header of the CUDA toolkit (the build's dependency record,
  `ninja -t deps`, says which; `-M` where it has none). Every other unit preprocesses to the
  same text in both configurations, so the CUDA build has compiled it already;
- its compile command loses FP8LAB_HAVE_CUDA, FP8LAB_HAVE_NCCL_H and
  FP8LAB_HAVE_CUDA_FP8_ORACLE and the toolkit's include directories, and gains a first include
  directory in which every CUDA header that fp8lab includes is an #error: an unguarded include
  fails with its name, wherever the toolkit is installed;
- units of CUDA-only targets (--cuda-only-dir, e.g. the GPU probes) are skipped.

Calls into CUDA code go through launcher headers that include the toolkit's headers, so an
unguarded call fails here too. Exit status 0 when every unit compiles, 1 otherwise.

Usage: check_cpu_only.py --build-dir B --source-dir S --cuda-include DIR... [--ninja NINJA]
                         [--cuda-only-dir bench/probes] [--jobs N]
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

CONFIG_MACROS = ("FP8LAB_HAVE_CUDA", "FP8LAB_HAVE_NCCL_H", "FP8LAB_HAVE_CUDA_FP8_ORACLE")
INCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>', re.M)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("--cuda-include", nargs="+", required=True)
    p.add_argument("--ninja", default="")
    p.add_argument("--cuda-only-dir", action="append", default=[])
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    return p.parse_args()


def under(path, dirs):
    return any(os.path.commonpath([path, d]) == d for d in dirs)


def units(args):
    """(source, directory, argv, object) of every C++ unit of the CPU-only configuration."""
    with open(os.path.join(args.build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    skip = [os.path.realpath(os.path.join(args.source_dir, d)) for d in args.cuda_only_dir]
    out = []
    for e in entries:
        src = os.path.realpath(os.path.join(e["directory"], e["file"]))
        if not src.endswith(".cpp") or under(src, skip):
            continue
        argv = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
        obj = argv[argv.index("-o") + 1]
        out.append((src, e["directory"], argv, os.path.realpath(os.path.join(e["directory"], obj))))
    return out


def ninja_deps(args):
    """Object -> its recorded dependencies (absolute), from the build's ninja log."""
    if not args.ninja:
        return {}
    r = subprocess.run([args.ninja, "-C", args.build_dir, "-t", "deps"], capture_output=True,
                       text=True)
    deps, current = {}, None
    for line in r.stdout.splitlines():
        if line and not line[0].isspace():
            current = os.path.realpath(os.path.join(args.build_dir, line.split(": #deps")[0]))
            deps[current] = []
        elif line.strip() and current:
            deps[current].append(os.path.realpath(os.path.join(args.build_dir, line.strip())))
    return deps


def preprocessor_deps(directory, argv):
    cmd = list(argv)
    i = cmd.index("-o")
    del cmd[i:i + 2]
    cmd.insert(1, "-M")
    r = subprocess.run(cmd, cwd=directory, capture_output=True, text=True)
    return [os.path.realpath(os.path.join(directory, d))
            for d in r.stdout.replace("\\\n", " ").split()[1:]]


class SourceScan:
    """What a repository file says: whether it names a configuration macro, which <headers>."""

    def __init__(self, source_dir):
        self.source_dir = os.path.realpath(source_dir)
        self.cache = {}

    def scan(self, path):
        if path not in self.cache:
            text = ""
            if under(path, [self.source_dir]) and os.path.isfile(path):
                with open(path, errors="replace") as f:
                    text = f.read()
            self.cache[path] = (any(m in text for m in CONFIG_MACROS), INCLUDE.findall(text))
        return self.cache[path]


def cpu_only_command(argv, cuda_dirs, poison_dir):
    """The unit's compile command as the CPU-only build would run it, syntax only."""
    out, i = [argv[0], "-fsyntax-only", "-I" + poison_dir], 1
    while i < len(argv):
        a = argv[i]
        if a in ("-o", "-MF", "-MT", "-MQ"):
            i += 2
            continue
        if a in ("-MD", "-MMD", "-c"):
            i += 1
            continue
        if a in ("-isystem", "-I") and i + 1 < len(argv):
            if not under(os.path.realpath(argv[i + 1]), cuda_dirs):
                out += [a, argv[i + 1]]
            i += 2
            continue
        if a.startswith("-I") and under(os.path.realpath(a[2:]), cuda_dirs):
            i += 1
            continue
        if a.startswith("-D") and a[2:].split("=")[0] in CONFIG_MACROS:
            i += 1
            continue
        out.append(a)
        i += 1
    return out


def main():
    args = parse_args()
    cuda_dirs = [os.path.realpath(d) for d in args.cuda_include]
    scan = SourceScan(args.source_dir)
    recorded = ninja_deps(args)
    chosen, cuda_headers = [], set()
    for src, directory, argv, obj in units(args):
        deps = recorded.get(obj) or preprocessor_deps(directory, argv)
        names_macro = False
        for d in [src] + deps:
            macro, includes = scan.scan(d)
            names_macro = names_macro or macro
            cuda_headers.update(h for h in includes
                                if any(os.path.isfile(os.path.join(c, h)) for c in cuda_dirs))
        if names_macro or any(under(d, cuda_dirs) for d in deps):
            chosen.append((src, directory, argv))

    with tempfile.TemporaryDirectory(prefix="fp8lab-cpu-only-") as poison_dir:
        for h in cuda_headers:
            path = os.path.join(poison_dir, h)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(f'#error "<{h}> is a CUDA toolkit header: include it only under '
                        f'#if FP8LAB_HAVE_CUDA (a build without CUDA has no toolkit)"\n')

        def compile_unit(unit):
            src, directory, argv = unit
            r = subprocess.run(cpu_only_command(argv, cuda_dirs, poison_dir), cwd=directory,
                               capture_output=True, text=True)
            return src, r.returncode, r.stderr

        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            results = list(pool.map(compile_unit, chosen))

    failed = [(s, err) for s, rc, err in results if rc != 0]
    for src, err in failed:
        print(f"FAILED without CUDA: {os.path.relpath(src, args.source_dir)}")
        print("\n".join(err.splitlines()[:12]))
    print(f"check_cpu_only: {len(chosen)} translation units depend on the CUDA configuration "
          f"({len(cuda_headers)} CUDA headers poisoned); {len(failed)} failed without CUDA")
    return 1 if failed or not chosen else 0


if __name__ == "__main__":
    sys.exit(main())
