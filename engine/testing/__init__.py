"""`kplan test`: declarative package tests (DESIGN §8) run against a dev cluster started here, or any cluster."""

from engine.testing.cluster import LocalCluster, install_crds, label_nodes
from engine.testing.commands import CliRunner
from engine.testing.loading import TestsInvalid, load_suite
from engine.testing.matching import Mismatch, Pattern, differences
from engine.testing.model import Case, Command, Expectation, Node, Step, Suite, Verb
from engine.testing.report import junit_xml
from engine.testing.results import CaseResult, StepResult, SuiteResult
from engine.testing.session import read_suite, run_package_tests

__all__ = [
    "Case",
    "CaseResult",
    "CliRunner",
    "Command",
    "Expectation",
    "LocalCluster",
    "Mismatch",
    "Node",
    "Pattern",
    "Step",
    "StepResult",
    "Suite",
    "SuiteResult",
    "TestsInvalid",
    "Verb",
    "differences",
    "install_crds",
    "junit_xml",
    "label_nodes",
    "load_suite",
    "read_suite",
    "run_package_tests",
]
