#!/usr/bin/env bash
# A run whose processes are titled as slime's are and print as Ray's log monitor forwards their
# lines (`(Actor pid=N) [time] ...`), for the last-output-per-role test (issue #44,
# last_output_daemon_test.cpp): the trainer prints one line and goes quiet; the rollout engine
# prints every 0.3 s; the run's own process (the driver) says it waits, on stderr. Everything ends
# when the sentinel file ($1) is removed.
sentinel=$1
(exec -a "ray::MegatronTrainRayActor.train" bash -c '
    echo "(MegatronTrainRayActor pid=$$) [$(date "+%Y-%m-%d %H:%M:%S")] timer.py:24 - Timer actor_train start"
    while [ -e "$0" ]; do sleep 0.2; done' "$sentinel") &
(exec -a "sglang::scheduler_TP0" bash -c '
    while [ -e "$0" ]; do
        echo "(SGLangEngine pid=$$) [$(date "+%Y-%m-%d %H:%M:%S") TP0] Decode batch. #running-req: 1, #token: 96"
        sleep 0.3
    done' "$sentinel") &
echo "driver: waiting for the train and rollout actors" >&2
wait
