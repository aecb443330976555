"""The PyGame GUI's pieces (PyGame.py at the root opens it)."""
