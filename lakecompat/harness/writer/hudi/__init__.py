"""The Hudi writer: Spark writes, timeline, file groups, the file-layout evidence and the
standalone script.
"""
