#!/usr/bin/env bash
# A run of a site's own Ray actors, for the last-output-per-role test of the role table
# (issue #44, last_output_daemon_test.cpp): a reward model titled `ray::RewardModel.score` (a
# role only the daemon's --role-table names) and a judge titled `ray::JudgeActor.grade` (a role
# only the run's own role_rows name) each print a line as Ray's log monitor forwards it
# (`(Actor pid=N) ...`) and stay; the built-in rows would call both `ray`. Everything ends when
# the sentinel file ($1) is removed.
sentinel=$1
(exec -a "ray::RewardModel.score" bash -c '
    echo "(RewardModel pid=$$) [$(date "+%Y-%m-%d %H:%M:%S")] reward batch 3 scored"
    while [ -e "$0" ]; do sleep 0.2; done' "$sentinel") &
(exec -a "ray::JudgeActor.grade" bash -c '
    echo "(JudgeActor pid=$$) [$(date "+%Y-%m-%d %H:%M:%S")] judge graded 16 samples"
    while [ -e "$0" ]; do sleep 0.2; done' "$sentinel") &
wait
