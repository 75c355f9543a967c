"""How the logs beside this file were made (run by hand, not by the tests): torch 2.13.0+cpu ran ops.py here with
NVGEMM the only GEMM backend (no GPU: every GEMM op then has no choice, and Inductor raises NoValidChoicesError
exactly as it does on a GPU where NVGEMM offers no kernel); this script moves each traceback to torch 2.15.0 as it
ran on the H200 (../shared/h200/2026-12-03-s5/ops.py, d3-ops.log): every torch frame's line number is looked up in
torch 2.15.0's own source (the same code line inside the same function), the paths become a Python 3.12 venv's, the
device cuda:0. A frame whose line is not unique in 2.15.0 is given in CHOSEN (the same code path, read by hand).

    python port.py TORCH_2_15_0_SOURCE_ROOT < torch-2.13.0.log > torch-2.15.0.log
"""
import ast
import re
import sys

OLD_SITE, NEW_SITE = "/tmp/explain-t213/lib/python3.11/site-packages/", "/home/u/.venv/lib/python3.12/site-packages/"
OLD_SCRIPT, NEW_SCRIPT = "/tmp/explain-run/ops.py", "/home/u/ops.py"
# (file, 2.13.0 line) -> 2.15.0 line, where the code line occurs more than once in the 2.15.0 function
CHOSEN = {
    ("torch/_inductor/compile_fx.py", 1059): 1346,  # the FX cache miss path (2.13.0 :1053-1059)
    ("torch/_inductor/compile_fx.py", 1079): 1369,
    ("torch/_inductor/lowering.py", 521): 527,  # _register_lowering's wrapped
    ("torch/_inductor/kernel/mm.py", 550): 878,  # tuned_mm's last autotune_select_algorithm call
    ("torch/_dynamo/eval_frame.py", 1183): 1282,  # compile_wrapper: `raise e.remove_dynamo_frames() from None`
}
FRAME = re.compile(r'  File "(?P<site>[^"]*site-packages/)(?P<rel>torch/[^"]+)", line (?P<line>\d+), in (?P<fn>\w+)')


def functions(path: str) -> dict:
    spans: dict = {}
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            spans.setdefault(node.name, []).append((node.lineno, node.end_lineno))
    return spans


def main(root: str) -> None:
    lines = sys.stdin.read().splitlines()
    out = []
    for index, line in enumerate(lines):
        found = FRAME.match(line)
        if found:
            rel, old, fn = found["rel"], int(found["line"]), found["fn"]
            source = open(f"{root}/{rel}", encoding="utf-8").read().splitlines()
            code = lines[index + 1].strip()
            hits = [n for a, b in functions(f"{root}/{rel}").get(fn, []) for n in range(a, b + 1)
                    if source[n - 1].strip() == code]
            new = CHOSEN.get((rel, old)) or (hits[0] if len(hits) == 1 else None)
            if new is None:
                raise SystemExit(f"{rel}:{old} {fn}: {code!r} found at {hits} in 2.15.0")
            line = f'  File "{NEW_SITE}{rel}", line {new}, in {fn}'
            if (rel, old) == ("torch/_dynamo/eval_frame.py", 1183):  # 2.15.0 has no comment there
                lines[index + 1] = lines[index + 1].replace("  # see TORCHDYNAMO_VERBOSE=1", "")
        out.append(line.replace(OLD_SITE, NEW_SITE).replace(OLD_SCRIPT, NEW_SCRIPT).replace("'cpu'", "'cuda:0'"))
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])
