# Build rules for `sam build` (template.yaml sets `BuildMethod: makefile` on every function).
#
# sam's own Python builder reads only a requirements.txt and ignores pyproject.toml, so each
# function is built by installing this project with pip: the artifact holds the packages that
# pyproject.toml names (engine, handlers) and their run-time dependencies, nothing else.
# sam runs `make build-<LogicalId>` with ARTIFACTS_DIR set to the function's artifact folder.
#
# Python 3.12 matches the functions' runtime, so the .pyc files pip writes are the ones Lambda
# loads (its file system is read-only: without them every cold start compiles again).
# --platform/--only-binary make pip pick Linux arm64 wheels even on an x86 machine: today every
# dependency is pure Python, but a compiled one added later must not arrive built for the host.
#
# boto3 is already in the Lambda runtime; leaving it (and botocore, s3transfer, jmespath,
# dateutil, six, urllib3) out would shrink the artifact from ~22 MB to ~3.5 MB zipped. It stays
# in, on purpose: AWS advises bundling the SDK so a deploy runs the version the tests ran, the
# runtime's copy changes under us, and pip has no clean way to skip one dependency. Import time,
# which is what a cold start mostly feels, is the same either way.

PYTHON ?= python3.12
PIP_TARGET_FLAGS = --disable-pip-version-check --no-cache-dir \
	--platform manylinux2014_aarch64 --implementation cp --python-version 3.12 \
	--only-binary=:all:

.PHONY: build-WebhookFunction build-TimerFunction build-RegistrationFunction

# One artifact for all three: the same project, whatever the function's handler.
# Built in the project folder (`sam build --build-in-source`): setuptools' build/ from an earlier build would
# put modules deleted since into the wheel, so it goes first.
build-WebhookFunction build-TimerFunction build-RegistrationFunction:
	rm -rf build
	$(PYTHON) -m pip install $(PIP_TARGET_FLAGS) --target "$(ARTIFACTS_DIR)" .
