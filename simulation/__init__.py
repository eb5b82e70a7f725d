"""Generative models of simulated participants (pure: numpy, scipy, pandas; no Django).

Loaded only by the simulator (``simulate_participants``), planning and benchmarks, never by a web
worker serving pages: the task types import from here inside their ``simulate`` methods.
"""
