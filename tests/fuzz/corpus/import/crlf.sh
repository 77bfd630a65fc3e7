X=1e-6
ARGS=(
  --lr "$X"
)
python3 train.py --rollout-batch-size 8 "${ARGS[@]}"
