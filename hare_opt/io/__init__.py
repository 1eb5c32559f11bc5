"""File formats: instance and schedule JSON, importers of public traces, and the one
way every output is written (``output``: atomic, special files decided once)."""

from hare_opt.io.json_io import (
    INSTANCE_FORMAT,
    SCHEDULE_FORMAT,
    dumps_instance,
    dumps_result,
    instance_from_dict,
    instance_to_dict,
    load_instance,
    load_result,
    result_from_dict,
    save_instance,
    save_result,
)
from hare_opt.io.output import (
    OutputError,
    atomic_open,
    atomic_path,
    atomic_write_bytes,
    atomic_write_text,
    destination,
)

__all__ = [
    "INSTANCE_FORMAT",
    "SCHEDULE_FORMAT",
    "OutputError",
    "atomic_open",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "destination",
    "dumps_instance",
    "dumps_result",
    "instance_from_dict",
    "instance_to_dict",
    "load_instance",
    "load_result",
    "result_from_dict",
    "save_instance",
    "save_result",
]
