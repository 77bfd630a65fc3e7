while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
X=1
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
done
python3 train.py --rollout-batch-size 8 --lr "$X"
