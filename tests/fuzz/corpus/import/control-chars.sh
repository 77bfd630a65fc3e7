frob[31m it
X=
echo ab
python3 train.py --rollout-batch-size 8 --lr "$X"
