X="${Y:-$(seq 1 "
Z='abc
A=(1 2
python3 train.py --rollout-batch-size 8 --lr "$X"
