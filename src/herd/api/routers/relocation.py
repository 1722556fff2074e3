"""``POST /v1/relocation-plans``: plan a Ganeti iallocator request and describe the plan.

herd's addition for the dashboard's relocation page: the same planner as
``herd iallocator``, answered with the Ganeti answer plus what a person needs
to judge it (per-instance outcome, per-host memory and disk before and after,
jobs with their dependencies, the answer's check). Nothing is stored.
"""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from herd.api.auth import Context
from herd.errors import InvalidRequest
from herd.planner import load_json
from herd.planner.report import PlanReport, plan_report
from herd.planner.request_schema import IALLOCATOR_REQUEST

router = APIRouter(prefix="/v1", tags=["relocation"])

#: a request larger than this is refused before it is parsed (Ganeti's are a few MiB at most)
MAX_REQUEST_BYTES = 32 * 1024 * 1024


def plan_view(report: PlanReport) -> dict[str, object]:
    answer = report.answer
    check = report.check
    return {
        "success": answer.success,
        "info": answer.info,
        "answer": {"success": answer.success, "info": answer.info, "result": answer.result},
        "instances": [asdict(row) for row in report.rows],
        "hosts": [asdict(host) for host in report.hosts],
        "jobs": [asdict(job) for job in report.jobs],
        "check": {
            "valid": check.valid,
            "errors": check.errors,
            "warnings": check.warnings,
            "score_before": check.score_before,
            "score_after": check.score_after,
            "moved": check.moved,
            "failed": check.failed,
        },
    }


#: the body is read as bytes for the parser's own errors (not a body dependency of
#: herd.api.bodies), so its document is the parser's schema, stated here
REQUEST_BODY = {
    "required": True,
    "content": {"application/json": {"schema": IALLOCATOR_REQUEST}},
}


@router.post("/relocation-plans", openapi_extra={"requestBody": REQUEST_BODY})
async def post_relocation_plan(request: Request, ctx: Context) -> dict[str, object]:
    """Plan the iallocator request in the body (the JSON Ganeti writes for its allocator)."""
    del ctx  # any authenticated caller may plan: nothing is read or stored
    body = await request.body()
    if len(body) > MAX_REQUEST_BYTES:
        raise InvalidRequest(
            f"The iallocator request is larger than {MAX_REQUEST_BYTES} bytes.", field="body"
        )
    raw = load_json(body.decode("utf-8", errors="replace"))
    report = await run_in_threadpool(plan_report, raw)
    return {"plan": plan_view(report)}
