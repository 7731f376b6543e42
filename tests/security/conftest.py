"""The adversarial suite: members a and b of the vtopo group and outsider c, through a real agent (tests/members.py)."""
from members import agent, readable_dir, users  # noqa: F401  (fixtures)
