"""The simulator's engines: the reference loop (``reference``) and the compiled cores.

``reference.Simulator`` is the definition: the rules a policy's decisions obey and the
event loop that calls the policy. ``compiled`` (gang policies, over ``kernel``) and
``relaxed`` (plan followers and ``hlas``, over ``relaxed_kernel``) transcribe the
built-in policies' rules into numba loops and give the same schedules. A compiled core
reads nothing of a policy but the state object the policy hands it (``state``), and
imports no policy module; ``hare_opt.sim.simulator`` picks the core a policy's
``PolicySpec`` names.
"""
