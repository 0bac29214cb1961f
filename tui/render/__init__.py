"""Rich renderables built from the data the services return, shared by the command line and
the workstation so that both show one definition of each table (and neither parses the other's
output)."""
