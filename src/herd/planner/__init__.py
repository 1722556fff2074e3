"""Relocation planner speaking Ganeti's iallocator protocol.

Pure code: no I/O, clocks or randomness. Use :func:`answer_dict` to answer a
decoded request, :func:`check_answer` to validate any answer, and
:func:`explain` for a readable plan.
"""

from herd.errors import MalformedRequest
from herd.planner.check import CheckReport, check_answer
from herd.planner.codec import format_answer, parse_request
from herd.planner.explain import PlanRow, explain
from herd.planner.fields import load_json
from herd.planner.model import PlannerOptions
from herd.planner.score import cluster_score
from herd.planner.service import Answer, answer_dict, plan_answer

__all__ = [
    "Answer",
    "CheckReport",
    "MalformedRequest",
    "PlanRow",
    "PlannerOptions",
    "answer_dict",
    "check_answer",
    "cluster_score",
    "explain",
    "format_answer",
    "load_json",
    "parse_request",
    "plan_answer",
]
