"""Go: batched rules, the game and its network, self-play training and its run, matches, GTP opponents."""
