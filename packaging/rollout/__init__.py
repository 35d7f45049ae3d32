"""The end-to-end rollout test that packaging/rollout-test runs: its docstring describes the
test and names the module that holds each part."""
