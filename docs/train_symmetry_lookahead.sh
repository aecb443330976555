#!/usr/bin/env bash
# The --canonical-symmetry lookahead run, exactly as it was run (seed 0, one 2-core CPU).
# It starts from the weights of the canonical-orientation run at iteration 174
# (docs/train_canonical_lookahead.sh, which this script runs first if needed) as a new run:
# the curriculum and the iteration count start over. main.py resumes exactly, so stopping
# and running this again continues where it stopped.
# Run from the repository root: bash docs/train_symmetry_lookahead.sh [FINAL_ITERATION]
set -euo pipefail
FINAL=${1:-227}
bash docs/train_canonical_lookahead.sh 174
mkdir -p runs/sym
[ -e runs/sym/rubik_policy_value.pt ] || cp runs/canon/rubik_policy_value.pt runs/sym/
python main.py --checkpoint runs/sym/rubik_policy_value.pt --log-dir runs/sym/training_logs \
    --targets lookahead --canonical-symmetry --keep-optimizer --policy-temperature 1 --start-scramble-len 16 \
    --states-per-iter 32768 --epochs 4 --batch-size 1024 --lr 5e-4 --value-weight 3000 \
    --skip-eval --no-progress --seed 0 --num-iters "$FINAL"
