"""Secret parameter values never reach the status, Events or messages; they are compared by digest."""

from __future__ import annotations

import json

from planner_harness import Driver, apply_task, configmap, instance, package, phase, plan, step

from engine.model import Package, Parameter, ParamType
from engine.planner import decide

PASSWORD = Parameter("password", secret=True, min_length=8)
PORT = Parameter("port", ParamType.INTEGER, default=6379, has_default=True, required=False)
SECRET = "hunter2-very-secret"


def secret_package(template: str = "{{ Params.password }}") -> Package:
    return package({"a.yaml": configmap("a", template)}, [apply_task("a", "a.yaml")],
                   [plan("deploy", phase("main", step("a")))], [PASSWORD, PORT])


def dumped(driver: Driver) -> str:
    events = [e.message for d in driver.decisions for e in d.events]
    return json.dumps([driver.status, events])


def test_secret_values_stay_out_of_status_and_events() -> None:
    driver = Driver(secret_package(), instance({"password": SECRET}))
    driver.run()
    driver.change_spec(password=SECRET + "-2")
    driver.run()
    assert SECRET not in dumped(driver)
    assert driver.status["lastRun"]["parameters"]["password"].startswith("sha256:")
    assert all("password" not in h["parameters"] for h in driver.status["history"])
    assert driver.decisions[0].actions[0].objects[0]["data"]["value"] == SECRET  # type: ignore[union-attr]


def test_a_changed_secret_triggers_a_plan_and_an_unchanged_one_does_not() -> None:
    driver = Driver(secret_package(), instance({"password": SECRET}))
    driver.run()
    assert driver.step(60).actions == ()
    uid = driver.status["plans"]["deploy"]["uid"]
    driver.change_spec(password="another-secret")
    driver.step(1)
    assert driver.status["plans"]["deploy"]["uid"] != uid


def test_an_invalid_secret_is_not_echoed_in_the_error() -> None:
    decision = decide(secret_package(), instance({"password": "short!"}), {}, Driver(secret_package(), {}).now)
    message = decision.status["plans"]["deploy"]["message"]
    assert "at least 8" in message
    assert "short!" not in json.dumps(decision.status)


def test_a_secret_in_a_render_error_is_scrubbed() -> None:
    pkg = secret_package("{{ '' | required('the password ' ~ Params.password ~ ' was rejected') }}")
    decision = decide(pkg, instance({"password": SECRET}), {}, Driver(pkg, {}).now)
    message = decision.status["plans"]["deploy"]["message"]
    assert decision.status["plans"]["deploy"]["status"] == "FATAL_ERROR"
    assert "the password ***** was rejected" in message
    assert SECRET not in json.dumps(decision.status)
    assert SECRET not in json.dumps([e.message for e in decision.events])


def test_secret_text_in_a_health_message_is_scrubbed() -> None:
    pkg = package({"a.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"},
                  [apply_task("a", "a.yaml")], [plan("deploy", phase("main", step("a")))], [PASSWORD])
    driver = Driver(pkg, instance({"password": SECRET}))
    driver.step()
    key = next(iter(driver.cluster.objects))
    driver.cluster.set_status(key, {"conditions": [{"type": "Ready", "status": "False",
                                                    "message": f"cannot log in with {SECRET}"}]})
    driver.step(1)
    assert SECRET not in dumped(driver)
    assert "*****" in driver.step_status("a")["message"]
