"""Everything Telegram- or AWS-facing: the Lambda entry points and what they need."""
