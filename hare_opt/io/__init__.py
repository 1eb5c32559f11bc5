"""File formats: instance and schedule JSON, and importers of public traces."""

from hare_opt.io.json_io import (
    INSTANCE_FORMAT,
    SCHEDULE_FORMAT,
    atomic_write_text,
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

__all__ = ["INSTANCE_FORMAT", "SCHEDULE_FORMAT", "atomic_write_text", "dumps_instance",
           "dumps_result", "instance_from_dict", "instance_to_dict", "load_instance",
           "load_result", "result_from_dict", "save_instance", "save_result"]
