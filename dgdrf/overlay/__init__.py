"""Gossip overlays as roles a node hosts, knowing nothing about scheduling:
Cyclon peer sampling, the gradient topology, and push-sum aggregation (thesis 2.3-2.4, 3.3)."""
