if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
if true; then
X=1
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
fi
python3 train.py --rollout-batch-size 8 --lr "$X"
