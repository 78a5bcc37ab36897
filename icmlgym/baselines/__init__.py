"""Baselines: what a paper compares against, or what a practitioner tries first.

``generic`` holds the ones that apply to any env (random) or any Discrete action
space (epsilon-greedy, UCB1); each family adds a module of its own.
"""
