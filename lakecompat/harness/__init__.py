"""lakecompat's harness: scenarios, the oracle, the writers, runs, reports and commands.

It drives the engines (`engines/`), which know nothing of it; its folders are layered, each
importing only those below: scenario/ <- writer/, results/ <- report/ <- run/ <- qualify/,
repro/, explore/ <- cli.py.
"""
