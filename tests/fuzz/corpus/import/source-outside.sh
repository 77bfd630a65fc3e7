source ../outside.sh
source /etc/shadow
. /etc/passwd
source "$(dirname "$0")/../../../../../../../../../../../../etc/passwd"
python3 train.py --rollout-batch-size 8 --lr "$X"
