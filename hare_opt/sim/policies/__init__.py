"""Scheduling policies for the simulator; each module names its source and simplifications."""
