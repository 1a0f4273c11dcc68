# lit configuration for the corpus of real-style kernels and regions: the
# golden tests' configuration (substitutions, tools), with this folder as root.
import os

lit_config.load_config(config, os.path.join(os.path.dirname(__file__), "..", "golden", "lit.cfg.py"))
config.name = "coconet-corpus"
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(lit_config.params.get("build", "build"), "corpus")
