"""openstacksdk's clustering proxy against a real uvicorn server (engine off).

What works with the installed openstacksdk: ``openstack.connect(auth_type="none",
auth={"endpoint": URL}, clustering_endpoint_override=URL)`` where URL ends in
``/v1``, and ``auth_type="admin_token"`` with ``auth={"token": SECRET,
"endpoint": URL}`` for ``auth: token``.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from tests.conftest import free_port
from tests.functional.api.helpers import DELETION_SPEC, SIM_SPEC

from herd.config import Settings
from herd.store import tokens


class ServerThread:
    def __init__(self, settings: Settings) -> None:
        import uvicorn

        from herd.api.app import create_app

        self.port = free_port()
        self.app = create_app(settings, start_engine=False)
        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def server(settings: Settings) -> Iterator[ServerThread]:
    with ServerThread(settings) as running:
        yield running


def connect(**kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import openstack

        return openstack.connect(**kwargs)


def test_sdk_profiles_policies_clusters_actions(server: ServerThread) -> None:
    conn = connect(
        auth_type="none", auth={"endpoint": server.url}, clustering_endpoint_override=server.url
    )
    cl = conn.clustering
    profile = cl.create_profile(name="web", spec=SIM_SPEC)
    assert profile.type == "herd.sim-1.0"
    assert cl.get_profile(profile.id).name == "web"
    assert [p.id for p in cl.profiles()] == [profile.id]
    assert cl.find_profile("web").id == profile.id
    cl.update_profile(profile, name="web2")
    assert cl.get_profile(profile.id).name == "web2"
    assert "herd.sim-1.0" in [t.name for t in cl.profile_types()]
    assert cl.get_profile_type("herd.sim-1.0").name == "herd.sim-1.0"

    policy = cl.create_policy(name="dp", spec=DELETION_SPEC)
    assert policy.type == "senlin.policy.deletion-1.1"
    assert [p.name for p in cl.policies()] == ["dp"]
    assert cl.get_policy("dp").id == policy.id
    assert "senlin.policy.deletion-1.1" in [t.name for t in cl.policy_types()]

    cluster = cl.create_cluster(name="c1", profile_id=profile.id, desired_capacity=2, max_size=5)
    assert cluster.status == "INIT"
    assert cluster.location is not None or cluster.id
    fetched = cl.get_cluster(cluster.id)
    assert (fetched.name, fetched.desired_capacity, fetched.max_size) == ("c1", 2, 5)
    assert [c.id for c in cl.clusters(name="c1")] == [cluster.id]
    assert cl.find_cluster("c1").id == cluster.id

    actions = list(cl.actions())
    assert [a.action for a in actions] == ["CLUSTER_CREATE"]
    action = cl.get_action(actions[0].id)
    assert action.target_id == cluster.id and action.status == "READY"
    assert [a.id for a in cl.actions(target_id=cluster.id)] == [action.id]
    # Paging: the SDK follows markers when a limit is given.
    assert len(list(cl.actions(limit=1))) == 1

    # Cluster actions return the action id from the body.
    from sqlalchemy import update

    from herd.store.models import ActionRow

    with server.app.state.herd.database.write() as session:
        session.execute(update(ActionRow).values(status="SUCCEEDED"))
    result = cl.scale_out_cluster(cluster, 2)
    assert cl.get_action(result["action"]).action == "CLUSTER_SCALE_OUT"
    with server.app.state.herd.database.write() as session:
        session.execute(update(ActionRow).values(status="SUCCEEDED"))
    result = cl.resize_cluster(cluster, adjustment_type="EXACT_CAPACITY", number=3)
    assert cl.get_action(result["action"]).inputs["number"] == 3
    with server.app.state.herd.database.write() as session:
        session.execute(update(ActionRow).values(status="SUCCEEDED"))

    node = cl.create_node(name="n1", profile_id=profile.id, cluster_id=cluster.id)
    assert cl.get_node(node.id).index == 1
    assert [n.id for n in cl.nodes(cluster_id=cluster.id)] == [node.id]

    deleted = cl.delete_cluster(cluster)
    assert deleted is not None
    assert [a.action for a in cl.actions(action="CLUSTER_DELETE")] == ["CLUSTER_DELETE"]
    assert isinstance(list(cl.events()), list)


def test_sdk_errors_are_raised(server: ServerThread) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from openstack import exceptions

    conn = connect(
        auth_type="none", auth={"endpoint": server.url}, clustering_endpoint_override=server.url
    )
    with pytest.raises(exceptions.NotFoundException):
        conn.clustering.get_cluster("nope")
    with pytest.raises(exceptions.BadRequestException):
        conn.clustering.create_cluster(name="c", profile_id="nope")


def test_sdk_admin_token(api_client: object, settings: Settings) -> None:
    token_settings = settings.model_copy(update={"auth": "token"})
    with ServerThread(token_settings) as running:
        services = running.app.state.herd
        with services.database.write() as session:
            _row, secret = tokens.create_token(session, "p1", "member", "sdk", time.time())
        conn = connect(
            auth_type="admin_token",
            auth={"token": secret, "endpoint": running.url},
            clustering_endpoint_override=running.url,
        )
        profile = conn.clustering.create_profile(name="p", spec=SIM_SPEC)
        assert profile.project_id == "p1"
        assert [p.id for p in conn.clustering.profiles()] == [profile.id]
