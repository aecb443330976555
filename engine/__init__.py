"""The engine: the game protocol and its lazy registry (Games), the search tree, Gumbel search and its
self-play, the value scale and precision. It imports no game, no run module and no script; the design
card's engine files (MCTS_Core, Action_MCTS, Self_Play, Train_Network, Policy_Value_Net) stay at the root
by the card's names."""
