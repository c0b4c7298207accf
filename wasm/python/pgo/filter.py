"""filter.py IN.proftext OUT.proftext REGEX: drops from an LLVM text profile
(llvm-profdata merge -text) the records of the functions whose name matches
REGEX, e.g. the committed profile's 'ceval\\.c:|^_PyEval_EvalFrameDefault$'
(ceval.c's static functions, named with their file, and the eval loop).
Prints how many it dropped and the first ten names."""
import re
import sys

src, dst, pat = sys.argv[1], sys.argv[2], re.compile(sys.argv[3])
t = open(src).read()
blocks = t.split('\n\n')
out = []
dropped = []
for b in blocks:
    lines = b.strip('\n').split('\n')
    name = next((l for l in lines if l and not l.startswith('#') and l != ':ir'), '')
    if pat.search(name) and '# Func Hash:' in b:
        dropped.append(name)
        continue
    out.append(b)
open(dst, 'w').write('\n\n'.join(out))
print(len(dropped), dropped[:10], file=sys.stderr)
