# issue 43: real Ray actors whose classes are named as the frameworks name theirs (slime / miles
# `MegatronTrainRayActor`, `SGLangEngine`), each holding a known number of written bytes, and an
# object of known size in Ray's object store. Writes {"trainer": pid, "rollout": pid, "driver":
# pid} to argv[1] once everything is in place, then waits for argv[2] to exist (or 120 s) and
# shuts Ray down. Usage: python ray_roles.py OUT.json DONE_FLAG TRAINER_MIB ENGINE_MIB STORE_MIB
import json
import os
import sys
import time

import ray

out, done = sys.argv[1], sys.argv[2]
trainer_mib, engine_mib, store_mib = (int(v) for v in sys.argv[3:6])

ray.init(num_cpus=2, object_store_memory=(store_mib + 128) << 20, include_dashboard=False,
         log_to_driver=False)


@ray.remote(num_cpus=0)
class MegatronTrainRayActor:
    def __init__(self, mib):
        self.held = bytearray(b"\x01") * (mib << 20)

    def pid(self):
        return os.getpid()


@ray.remote(num_cpus=0)
class SGLangEngine:
    def __init__(self, mib):
        self.held = bytearray(b"\x01") * (mib << 20)

    def pid(self):
        return os.getpid()


trainer = MegatronTrainRayActor.remote(trainer_mib)
engine = SGLangEngine.remote(engine_mib)
stored = ray.put(bytearray(b"\x02") * (store_mib << 20))
pids = {
    "trainer": ray.get(trainer.pid.remote()),
    "rollout": ray.get(engine.pid.remote()),
    "driver": os.getpid(),
}
time.sleep(1)  # an actor's title goes back to "ray::Class" once its call has returned
with open(out + ".tmp", "w") as f:
    json.dump(pids, f)
os.rename(out + ".tmp", out)
deadline = time.time() + 120
while not os.path.exists(done) and time.time() < deadline:
    time.sleep(0.2)
del stored
ray.shutdown()
