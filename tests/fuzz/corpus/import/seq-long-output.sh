X=$(seq 1 99999)
python3 train.py --rollout-batch-size 8 --lr "$X"
