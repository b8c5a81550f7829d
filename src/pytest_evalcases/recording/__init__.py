"""A run's model traffic: the recording file, the three model APIs' wire formats, the
recorder and its proxy, and replay (docs/replay.md)."""
