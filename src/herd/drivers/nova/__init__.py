"""The ``os.nova.server`` driver: Nova servers through openstacksdk, with Senlin's profile spec."""
