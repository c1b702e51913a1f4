"""Drive-train inputs shared by the tests of more than one layer (the loaders' and the physical
ranges'): a URDF whose ros2_control ``<transmission>`` tags make the drive train."""

#: Four revolute joints; j1 driven through a SimpleTransmission (reduction 80, rotor inertia
#: 1.5e-4 kg m^2), j3 and j4 through a DifferentialTransmission of actuators m3 and m4.
TRANSMISSION_URDF = """<robot name="tx">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.2 0 0"/><mass value="2"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.1 0 0"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="l3"><inertial><origin xyz="0 0 0.1"/><mass value="0.5"/><inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.001"/></inertial></link>
  <link name="l4"><inertial><origin xyz="0 0 0.05"/><mass value="0.3"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.4 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.3 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>
  <joint name="j4" type="revolute"><parent link="l3"/><child link="l4"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>
  <transmission name="t1">
    <plugin>transmission_interface/SimpleTransmission</plugin>
    <actuator name="m1" role="actuator1"><rotor_inertia>1.5e-4</rotor_inertia></actuator>
    <joint name="j1" role="joint1"><mechanical_reduction>80.0</mechanical_reduction><offset>0.0</offset></joint>
  </transmission>
  <transmission name="wrist">
    <plugin>transmission_interface/DifferentialTransmission</plugin>
    <actuator name="m3" role="actuator1"><mechanical_reduction>50</mechanical_reduction></actuator>
    <actuator name="m4" role="actuator2"><mechanical_reduction>-40</mechanical_reduction></actuator>
    <joint name="j3" role="joint1"><mechanical_reduction>2.0</mechanical_reduction></joint>
    <joint name="j4" role="joint2"><mechanical_reduction>-1.5</mechanical_reduction></joint>
  </transmission>
</robot>"""
