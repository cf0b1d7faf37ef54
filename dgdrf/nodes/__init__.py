"""The actors: Server (resource node), User, Gateway and Collector (the instrument)."""
