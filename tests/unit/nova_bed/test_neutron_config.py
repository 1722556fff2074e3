"""The Nova bed's Neutron configuration (tests/nova_bed/neutron.py), without starting Neutron.

A wrong file here shows up only as a bed that fails to start, minutes into a run: these pin
what the running bed depends on (tests/e2e/nova/test_nova_network.py runs the real thing).
"""

from __future__ import annotations

import configparser
from pathlib import Path

from tests.nova_bed import neutron


def test_rendered_configuration(tmp_path: Path) -> None:
    url = "postgresql+psycopg2://postgres@/neutron?host=/tmp/x&port=5"
    bed = neutron.Neutron(tmp_path, tmp_path, 9696, url)
    conf = configparser.ConfigParser(interpolation=None)
    conf.read([bed.dir / "neutron.conf", bed.dir / "ml2_conf.ini"])
    assert conf["database"]["connection"] == url
    assert conf["DEFAULT"]["core_plugin"] == "ml2"
    assert conf["DEFAULT"]["transport_url"] == "fake://"  # no broker waits on agent casts
    assert conf["ml2"]["mechanism_drivers"] == "herd_bed"
    assert conf["ml2"]["type_drivers"] == "flat,vlan"
    paste = configparser.ConfigParser(interpolation=None)
    paste.read(conf["DEFAULT"]["api_paste_config"])
    pipeline = paste["composite:neutronapi_v2_0"]["keystone"].split()
    # the token becomes identity headers right before Neutron's own context filter
    assert pipeline.index("herd_bed_auth") + 1 == pipeline.index("keystonecontext")
    assert "authtoken" not in pipeline


def test_the_mechanism_drivers_entry_point_names_its_class(tmp_path: Path) -> None:
    bed = neutron.Neutron(tmp_path, tmp_path, 9696, "sqlite://")
    (dist,) = (bed.dir / "pylib").glob("*.dist-info")
    entry = configparser.ConfigParser()
    entry.read(dist / "entry_points.txt")
    module, _, cls = entry["neutron.ml2.mechanism_drivers"]["herd_bed"].partition(":")
    source = (neutron.NEUTRON_SCRIPTS / f"{module}.py").read_text()
    assert f"class {cls}(api.MechanismDriver)" in source
    assert str(neutron.NEUTRON_SCRIPTS) in bed.env["PYTHONPATH"].split(":")
