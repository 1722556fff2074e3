"""Running a cluster's bound policies for one phase of an action, without I/O.

The engine (``engine/policy_check.py``) and the scale-in preview both call
:func:`run_checks`, so a preview sees exactly the decisions an action would:
bindings run in the order given (ascending priority), each sees the data the
earlier ones wrote, and the first ERROR stops the check with
``Failed policy '<name>': <reason>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from herd.policies.base import Policy, PolicyContext
from herd.types import CheckStatus, Phase


@dataclass(frozen=True)
class BoundPolicy:
    """An enabled policy attached to the cluster, as the checks need it."""

    binding_id: str
    name: str
    policy: Policy
    last_op: float | None = None  # when this binding last let an action through
    #: the binding's stored data (e.g. the server group the affinity policy's attach made)
    data: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckOutcome:
    """The result of one phase: the action's new data and who let it through."""

    ok: bool
    data: dict[str, object]
    reason: str = ""
    applied: bool = True  # False when no binding applies to this action and phase
    touched: list[str] = field(default_factory=list)  # binding ids whose last_op moves
    failed_policy: str = ""  # the binding that refused, and its own words
    failed_reason: str = ""
    notes: dict[str, object] = field(default_factory=dict)  # the policies' explanations
    #: binding id -> keys to merge into that binding's stored data (Decision.binding_data)
    binding_data: dict[str, dict[str, object]] = field(default_factory=dict)


def run_checks(bound: Sequence[BoundPolicy], request: PolicyContext) -> CheckOutcome:
    """Run the applicable bindings of ``bound`` in order for ``request.phase``.

    Args:
        bound: The enabled bindings in ascending priority (id breaks ties).
        request: What every policy is asked about (action, phase, snapshot, inputs, the
            data so far, now, seed); each policy sees it with the data the earlier ones
            wrote and its own binding's ``last_op``.

    Returns:
        The outcome: ``ok`` False with the reason at the first ERROR; ``applied``
        False when no binding applies (``data`` is then the input data unchanged).
    """
    data: dict[str, object] = dict(request.data)
    applicable = [b for b in bound if b.policy.applies_to(request.action, request.phase)]
    if not applicable:
        return CheckOutcome(True, data, applied=False)
    data["status"] = CheckStatus.OK.value
    # An AFTER check keeps the BEFORE result ("Candidates generated", ...) unless a
    # policy says something new, so the stored data reads as the spec shows it.
    data["reason"] = str(data.get("reason") or "") if request.phase is Phase.AFTER else ""
    touched: list[str] = []
    notes: dict[str, object] = {}
    binding_data: dict[str, dict[str, object]] = {}
    for binding in applicable:
        context = replace(request, data=data, last_op=binding.last_op, binding_data=binding.data)
        if request.phase is Phase.BEFORE:
            decision = binding.policy.before(context)
        else:
            decision = binding.policy.after(context)
        if decision.status is CheckStatus.NONE:
            continue
        data = dict(decision.data)
        notes.update(decision.notes)
        if decision.status is CheckStatus.ERROR:
            reason = f"Failed policy '{binding.name}': {decision.reason}"
            data["status"] = CheckStatus.ERROR.value
            data["reason"] = reason
            return CheckOutcome(
                False,
                data,
                reason,
                touched=touched,
                failed_policy=binding.name,
                failed_reason=decision.reason,
                notes=notes,
            )
        data["status"] = CheckStatus.OK.value
        data["reason"] = decision.reason or data.get("reason", "")
        if decision.touch_last_op:
            touched.append(binding.binding_id)
        if decision.binding_data:
            binding_data[binding.binding_id] = dict(decision.binding_data)
    if not data.get("reason"):
        data["reason"] = "Completed policy checking."
    return CheckOutcome(True, data, touched=touched, notes=notes, binding_data=binding_data)
