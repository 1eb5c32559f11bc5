"""A small builder, in the spirit of PyJobShop's ``Model``, for writing instances in code."""

from __future__ import annotations

from collections.abc import Mapping

from hare_opt.model.instance import GPU, Instance, Job


class Model:
    """Collects GPUs and jobs, then ``build()`` validates them into an ``Instance``.

    >>> m = Model()
    >>> m.add_gpus("V100", 2)
    [GPU(id='V100-0', type='V100', node=None), GPU(id='V100-1', type='V100', node=None)]
    >>> job = m.add_job(task_time={"V100": 4}, rounds=3, tasks_per_round=2)
    >>> m.build("demo").num_tasks
    6
    """

    def __init__(self) -> None:
        self.gpus: list[GPU] = []
        self.jobs: list[Job] = []

    def add_gpu(self, type: str, id: str | None = None, node: str | None = None) -> GPU:
        gpu = GPU(id if id is not None else f"{type}-{self._count_type(type)}", type, node)
        self.gpus.append(gpu)
        return gpu

    def add_gpus(self, type: str, count: int, node: str | None = None) -> list[GPU]:
        return [self.add_gpu(type, node=node) for _ in range(count)]

    def add_job(
        self,
        task_time: Mapping[str, int],
        *,
        rounds: int = 1,
        tasks_per_round: int = 1,
        weight: int = 1,
        release: int = 0,
        sync_time: int | Mapping[str, int] = 0,
        switch_overhead: int = 0,
        id: str | None = None,
    ) -> Job:
        job = Job(
            id if id is not None else f"j{len(self.jobs)}",
            dict(task_time),
            rounds,
            tasks_per_round,
            weight,
            release,
            sync_time,
            switch_overhead,
        )
        self.jobs.append(job)
        return job

    def build(self, name: str = "instance", time_unit: str = "s") -> Instance:
        return Instance(tuple(self.gpus), tuple(self.jobs), name, time_unit)

    def _count_type(self, type: str) -> int:
        return sum(g.type == type for g in self.gpus)
