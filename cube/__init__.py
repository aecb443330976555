"""The cubes: geometry and puzzles, exact tables, solvers and searches, the cube's training targets, its
evaluation modes, and its run (flags, state) as main.py trains it."""
