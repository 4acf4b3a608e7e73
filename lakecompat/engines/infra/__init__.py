"""Shared infrastructure of the engines: artifacts from Maven, JDKs, supervised processes, Hadoop
configuration, the local file system jar and the watchdog.
"""
