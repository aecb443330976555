#!/usr/bin/env bash
# The --targets lookahead recipe with a canonical-orientation network, stage by stage,
# exactly as it was run (seed 0, one 2-core CPU). Every stage resumes the run where the
# previous one stopped (main.py resumes exactly), adding the flags that were added then.
# Run from the repository root: bash docs/train_canonical_lookahead.sh [FINAL_ITERATION]
set -euo pipefail
FINAL=${1:-174}
COMMON=(--targets lookahead --start-scramble-len 16 --states-per-iter 32768 --epochs 4 --batch-size 1024
        --value-weight 3000 --skip-eval --no-progress --seed 0)
PLAIN=(--checkpoint runs/lookahead/rubik_policy_value.pt --log-dir runs/lookahead/training_logs)
CANON=(--checkpoint runs/canon/rubik_policy_value.pt --log-dir runs/canon/training_logs)

# 1. A plain network learns from one-ply lookahead targets (iterations 1-57), then with
#    the double estimate (58-92).
python main.py "${PLAIN[@]}" "${COMMON[@]}" --lr 1e-3 --num-iters 57
python main.py "${PLAIN[@]}" "${COMMON[@]}" --lr 1e-3 --double-estimate --num-iters 92

# 2. Its weights start a canonical-orientation network (a new run: the curriculum and the
#    iteration count start over).
mkdir -p runs/canon
[ -e runs/canon/rubik_policy_value.pt ] || cp runs/lookahead/rubik_policy_value.pt runs/canon/
python main.py "${CANON[@]}" "${COMMON[@]}" --canonical-orientation --lr 1e-3 --num-iters 12
python main.py "${CANON[@]}" "${COMMON[@]}" --canonical-orientation --lr 1e-3 --double-estimate --num-iters 60
python main.py "${CANON[@]}" "${COMMON[@]}" --canonical-orientation --lr 5e-4 --double-estimate --keep-optimizer --num-iters 100
python main.py "${CANON[@]}" "${COMMON[@]}" --canonical-orientation --lr 5e-4 --double-estimate --keep-optimizer \
    --policy-temperature 1 --num-iters "$FINAL"
