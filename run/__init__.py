"""What every training run and script shares: the run loop (Run_Loop), its files and locks (Run_Files,
Run_IO), the command line (Cli), the recipes, and self-play workers."""
