"""The fidelity audit: is the comparison fair? Checks of the baseline, arm parity, completeness,
judge breadth and ablation effect (run_audit in audit.run).
"""
