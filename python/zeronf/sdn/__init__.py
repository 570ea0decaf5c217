"""ZeroNF on an SDN: the OpenFlow 1.3 agent (agent.py, docs/sdn.md)."""
